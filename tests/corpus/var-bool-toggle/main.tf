terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "create" {
  type        = bool
  description = "Whether to create anything."
  default     = true
}

variable "with_extra" {
  type    = bool
  default = false
}

resource "null_resource" "main" {
  count = var.create ? 1 : 0
}

resource "null_resource" "extra" {
  count = var.create && var.with_extra ? 1 : 0
}

output "created" {
  value = length(null_resource.main) > 0
}
