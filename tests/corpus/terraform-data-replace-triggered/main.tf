terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "image" {
  type    = string
  default = "app:1"
}

resource "terraform_data" "image" {
  input = var.image
}

resource "null_resource" "server" {
  lifecycle {
    replace_triggered_by = [terraform_data.image]
  }
}

output "image" {
  value = terraform_data.image.output
}
