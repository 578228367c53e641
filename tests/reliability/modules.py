"""Small root modules the reliability tests write into their tmp folder."""

from __future__ import annotations

from tests.integration.helpers import SIM_HEADER

PAIR_ADDRESSES = {"sim_network": "sim_network.net", "sim_vm": "sim_vm.vm"}
NETWORK_ADDRESSES = {"sim_network": "sim_network.this"}

# A sensitive input and a sensitive output, for the secrets checks.
SECRET_TF = SIM_HEADER + """variable "token" {
  type      = string
  sensitive = true
}
variable "fallback" {
  type      = string
  sensitive = true
  default   = "DEFAULT-s3cr3t-in-hcl-0001"
}
resource "sim_network" "net" {
  name = "secret-net"
}
resource "sim_vm" "vm" {
  name       = "secret-vm"
  network_id = sim_network.net.id
}
resource "sim_config" "cfg" {
  name    = "secret-cfg"
  vm_id   = sim_vm.vm.id
  content = "role: web"
  secret  = var.token
}
output "token_echo" {
  value     = var.token
  sensitive = true
}
output "fallback_echo" {
  value     = var.fallback
  sensitive = true
}
output "config_id" {
  value = sim_config.cfg.id
}
"""
