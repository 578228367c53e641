terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "endpoint" {
  type    = tuple([string, number, bool])
  default = ["db.internal", 5432, true]
}

resource "null_resource" "endpoint" {
  triggers = {
    host = var.endpoint[0]
    port = var.endpoint[1]
    tls  = var.endpoint[2]
  }
}

output "endpoint" {
  value = var.endpoint
}
