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

variable "ratio" {
  type    = number
  default = 1.5
}

resource "null_resource" "replica" {
  count = var.replicas

  triggers = {
    index = count.index
    share = var.ratio * count.index
  }
}

output "shares" {
  value = null_resource.replica[*].triggers.share
}

output "ratio" {
  value = var.ratio
}
