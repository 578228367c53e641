terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

data "null_data_source" "values" {
  inputs = {
    name = "web"
    zone = "b"
  }
}

resource "null_resource" "web" {
  triggers = {
    name = data.null_data_source.values.outputs["name"]
  }
}

output "outputs" {
  value = data.null_data_source.values.outputs
}
