terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "service" {
  type = object({
    name     = string
    port     = number
    public   = bool
    aliases  = list(string)
    labels   = map(string)
  })
}

resource "null_resource" "service" {
  triggers = {
    name = var.service.name
    port = var.service.port
  }
}

output "service" {
  value = var.service
}
