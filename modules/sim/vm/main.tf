# A simulated vm attached to a network (network_id comes from modules/sim/network).
terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

# No arguments: the sim cloud is configured by HYOPS_SIM_ROOT / HYOPS_SIM_FAULTS.
# The empty block makes the engine report the provider's own configure error alone.
provider "sim" {}

variable "network_id" {
  type        = string
  description = "Id of the sim_network to attach to (output network_id of sim/network)."
}

variable "name" {
  type        = string
  default     = "demo-vm"
  description = "Name of the vm."
}

variable "size" {
  type        = string
  default     = "small"
  description = "Size of the vm."
}

resource "sim_vm" "this" {
  name       = var.name
  network_id = var.network_id
  size       = var.size
}

output "vm_id" {
  value = sim_vm.this.id
}

output "ip" {
  value = sim_vm.this.ip
}
