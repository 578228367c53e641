terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

variable "vm_size" {
  type    = string
  default = "medium"
}

resource "sim_network" "net" {
  name = "app-net"
  cidr = "10.1.0.0/16"
}

resource "sim_vm" "app" {
  name       = "app-1"
  network_id = sim_network.net.id
  size       = var.vm_size
}

resource "sim_config" "app" {
  name    = "app-config"
  vm_id   = sim_vm.app.id
  content = jsonencode({ listen = 8080 })
  secret  = "hunter2"
}

output "vm" {
  value = {
    id   = sim_vm.app.id
    size = sim_vm.app.size
  }
}

output "config_id" {
  value = sim_config.app.id
}
