terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "name" {
  type        = string
  description = "Name tag for the resource."
  default     = "example"
}

resource "null_resource" "this" {
  triggers = {
    name = var.name
  }
}

output "id" {
  description = "The resource id."
  value       = null_resource.this.id
}

output "name" {
  value = null_resource.this.triggers.name
}
