terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

variable "secret" {
  type      = string
  sensitive = true
  default   = "p@ss$$word"
}

resource "sim_network" "n" {
  name = "secrets-net"
}

resource "sim_vm" "v" {
  name       = "secrets-vm"
  network_id = sim_network.n.id
}

resource "sim_config" "c" {
  name   = "secrets-config"
  vm_id  = sim_vm.v.id
  secret = var.secret
}

output "secret" {
  value     = var.secret
  sensitive = true
}
