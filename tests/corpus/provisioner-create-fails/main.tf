terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "ok" {}

resource "null_resource" "bootstrap" {
  depends_on = [null_resource.ok]

  provisioner "local-exec" {
    command = "echo bootstrapping && exit 7"
  }
}

output "ok_id" {
  value = null_resource.ok.id
}
