terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

data "terraform_remote_state" "network" {
  backend = "local"

  config = {
    path = "${path.module}/upstream/network.tfstate"
  }
}

resource "null_resource" "consumer" {
  triggers = {
    vpc = data.terraform_remote_state.network.outputs.vpc_id
  }
}

output "vpc_id" {
  value = data.terraform_remote_state.network.outputs.vpc_id
}

output "subnets" {
  value = data.terraform_remote_state.network.outputs.subnet_ids
}

output "missing" {
  value = try(data.terraform_remote_state.network.outputs.nope, "absent")
}
