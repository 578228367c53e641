terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

import {
  to = sim_network.adopted
  id = "net-00000000"
}

resource "sim_network" "adopted" {
  name = "ghost"
}
