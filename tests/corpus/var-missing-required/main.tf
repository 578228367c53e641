terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "project" {
  type        = string
  description = "Required: no default."
}

resource "null_resource" "project" {
  triggers = {
    project = var.project
  }
}
