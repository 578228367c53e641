terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "api_key" {
  type    = string
  default = "key-123"
}

resource "null_resource" "client" {}

output "client" {
  value = {
    id  = null_resource.client.id
    key = sensitive(var.api_key)
  }
  sensitive = true
}

output "key_length" {
  value = length(nonsensitive(sensitive(var.api_key)))
}
