terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

resource "sim_network" "shared" {
  name = "shared"
}

output "network_id" {
  value = sim_network.shared.id
}
