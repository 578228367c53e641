terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "declared" {
  type    = string
  default = "x"
}

resource "null_resource" "one" {}
