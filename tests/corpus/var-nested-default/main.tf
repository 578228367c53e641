terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "clusters" {
  type = map(object({
    nodes    = number
    versions = list(string)
    settings = map(string)
  }))
  default = {
    blue = {
      nodes    = 2
      versions = ["1.29", "1.30"]
      settings = { autoscale = "on" }
    }
    green = {
      nodes    = 1
      versions = []
      settings = {}
    }
  }
}

resource "null_resource" "cluster" {
  for_each = var.clusters

  triggers = {
    nodes = each.value.nodes
  }
}

output "clusters" {
  value = var.clusters
}
