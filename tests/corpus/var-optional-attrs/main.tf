terraform {
  required_version = ">= 1.3"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "buckets" {
  type = list(object({
    name       = string
    versioning = optional(bool, true)
    retention  = optional(number)
    tags       = optional(map(string), {})
  }))
  default = [
    { name = "logs" },
    { name = "media", versioning = false, retention = 30 },
  ]
}

resource "null_resource" "bucket" {
  for_each = { for b in var.buckets : b.name => b }

  triggers = {
    versioning = each.value.versioning
  }
}

output "buckets" {
  value = var.buckets
}
