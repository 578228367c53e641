terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "ports" {
  type    = list(number)
  default = [80]
}

variable "owner" {
  type = string
}

resource "null_resource" "port" {
  for_each = toset([for p in var.ports : tostring(p)])
}

output "ports" {
  value = var.ports
}

output "owner" {
  value = var.owner
}
