terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "exit_code" {
  type    = number
  default = 1
}

resource "null_resource" "job" {
  provisioner "local-exec" {
    command = "exit ${var.exit_code}"
  }
}
