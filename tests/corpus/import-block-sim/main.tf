terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

variable "network_id" {
  type = string
}

import {
  to = sim_network.adopted
  id = var.network_id
}

resource "sim_network" "adopted" {
  name = "made-elsewhere"
  cidr = "10.50.0.0/16"
}

output "cidr" {
  value = sim_network.adopted.cidr
}
