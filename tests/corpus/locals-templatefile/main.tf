terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "hosts" {
  type    = list(string)
  default = ["10.0.0.1", "10.0.0.2"]
}

locals {
  rendered = templatefile("${path.module}/templates/upstream.conf.tftpl", {
    name  = "backend"
    hosts = var.hosts
    port  = 8080
  })
}

resource "null_resource" "config" {
  triggers = {
    digest = md5(local.rendered)
  }
}

output "rendered" {
  value = local.rendered
}
