terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "port" {
  type    = number
  default = 443
}

resource "null_resource" "listener" {
  triggers = {
    port = var.port
  }
}

output "url" {
  value = "https://example.test:${null_resource.listener.triggers.port}"

  precondition {
    condition     = var.port > 0 && var.port < 65536
    error_message = "The port must be a valid TCP port."
  }
}
