# A configuration pushed to a simulated vm; deleted by the cloud when its vm goes away.
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

variable "vm_id" {
  type        = string
  description = "Id of the sim_vm to configure (output vm_id of sim/vm)."
}

variable "name" {
  type        = string
  default     = "demo-config"
  description = "Name of the config."
}

variable "content" {
  type        = string
  default     = "role: web\n"
  description = "Configuration text."
}

variable "api_token" {
  type        = string
  default     = ""
  sensitive   = true
  description = "A secret for the vm; the sim cloud stores only its sha256."
}

resource "sim_config" "this" {
  name    = var.name
  vm_id   = var.vm_id
  content = var.content
  secret  = var.api_token
}

output "config_id" {
  value = sim_config.this.id
}

output "api_token_echo" {
  value     = var.api_token
  sensitive = true
}
