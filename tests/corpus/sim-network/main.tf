terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

variable "name" {
  type    = string
  default = "corpus-net"
}

resource "sim_network" "main" {
  name = var.name
  cidr = "10.20.0.0/16"
}

output "network_id" {
  value = sim_network.main.id
}

output "cidr" {
  value = sim_network.main.cidr
}
