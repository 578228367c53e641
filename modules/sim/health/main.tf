# A health check watching a simulated object (typically a vm or config).
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

variable "target_id" {
  type        = string
  description = "Id of the object to watch."
}

variable "name" {
  type        = string
  default     = "demo-health"
  description = "Name of the health check."
}

resource "sim_health_check" "this" {
  name      = var.name
  target_id = var.target_id
}

output "health_id" {
  value = sim_health_check.this.id
}

output "health_status" {
  value = sim_health_check.this.status
}
