terraform {
  required_version = ">= 1.3"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "network" {
  type = object({
    cidr        = string
    enable_nat  = optional(bool, false)
    subnets     = optional(list(string), [])
    dns_servers = optional(list(string))
  })
}

resource "null_resource" "network" {
  triggers = {
    cidr = var.network.cidr
    nat  = var.network.enable_nat
  }
}

output "network" {
  value = var.network
}
