terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "admins" {
  type    = set(string)
  default = ["carol", "alice", "bob", "alice"]
}

resource "null_resource" "admin" {
  for_each = var.admins
}

output "admins" {
  value = var.admins
}

output "count" {
  value = length(var.admins)
}
