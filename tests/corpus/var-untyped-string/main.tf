terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "region" {
  description = "An untyped variable, as older modules write them."
  default     = "eu-west-1"
}

resource "null_resource" "region" {
  triggers = {
    region = var.region
  }
}

output "region" {
  value = var.region
}
