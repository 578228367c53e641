terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

resource "sim_network" "original" {
  name = "made-elsewhere"
  cidr = "10.50.0.0/16"
}

output "network_id" {
  value = sim_network.original.id
}
