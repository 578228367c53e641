terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "replicas" {
  type    = number
  default = 1
}

resource "null_resource" "cluster" {
  triggers = {
    replicas = var.replicas
  }

  lifecycle {
    precondition {
      condition     = var.replicas % 2 == 1
      error_message = "An odd number of replicas is needed for a quorum."
    }
  }
}
