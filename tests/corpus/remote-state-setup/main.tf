terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

provider "sim" {}

data "terraform_remote_state" "net" {
  backend = "local"

  config = {
    path = "${path.module}/setup/terraform.tfstate"
  }
}

resource "sim_vm" "app" {
  name       = "app"
  network_id = data.terraform_remote_state.net.outputs.network_id
}

output "vm_id" {
  value = sim_vm.app.id
}

output "network_id" {
  value = data.terraform_remote_state.net.outputs.network_id
}
