terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "environment" {
  type        = string
  description = "Deployment environment."
  default     = "dev"

  validation {
    condition     = contains(["dev", "staging", "prod"], var.environment)
    error_message = "The environment must be dev, staging or prod."
  }
}

variable "prefix" {
  type = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,20}$", var.prefix))
    error_message = "The prefix must be lower case letters, digits and dashes."
  }
}

resource "null_resource" "label" {
  triggers = {
    label = "${var.prefix}-${var.environment}"
  }
}

output "label" {
  value = null_resource.label.triggers.label
}
