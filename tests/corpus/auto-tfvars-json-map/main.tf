terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "labels" {
  type    = map(string)
  default = {}
}

resource "null_resource" "labelled" {
  triggers = var.labels
}

output "labels" {
  value = var.labels
}
