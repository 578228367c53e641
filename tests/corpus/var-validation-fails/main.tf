terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "instance_count" {
  type    = number
  default = 1

  validation {
    condition     = var.instance_count >= 1 && var.instance_count <= 5
    error_message = "The instance_count must be between 1 and 5."
  }
}

resource "null_resource" "node" {
  count = var.instance_count
}
