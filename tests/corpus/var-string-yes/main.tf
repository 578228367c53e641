terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "answer" {
  type    = string
  default = "maybe"
}

resource "null_resource" "answer" {
  triggers = {
    answer = var.answer
  }
}

output "answer" {
  value = var.answer
}
