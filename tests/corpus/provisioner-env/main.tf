terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "greeting" {
  type    = string
  default = "hello"
}

resource "null_resource" "env" {
  triggers = {
    greeting = var.greeting
  }

  provisioner "local-exec" {
    command = "test \"$GREETING\" = \"$EXPECTED\""
    environment = {
      GREETING = self.triggers.greeting
      EXPECTED = "hi there"
    }
  }
}
