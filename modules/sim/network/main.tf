# A simulated network: the first module of the demo stack.
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

variable "name" {
  type        = string
  default     = "demo-net"
  description = "Name of the network."
}

variable "cidr" {
  type        = string
  default     = "10.0.0.0/16"
  description = "Address range of the network."
}

resource "sim_network" "this" {
  name = var.name
  cidr = var.cidr
}

output "network_id" {
  value = sim_network.this.id
}

output "cidr" {
  value = sim_network.this.cidr
}
