terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

variable "networks" {
  type = map(string)
  default = {
    blue  = "10.10.0.0/16"
    green = "10.11.0.0/16"
  }
}

resource "sim_network" "net" {
  for_each = var.networks

  name = each.key
  cidr = each.value
}

output "ids" {
  value = { for k, n in sim_network.net : k => n.id }
}
