terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "agent" {
  provisioner "local-exec" {
    when    = destroy
    command = "echo deregistering && exit 3"
  }
}

output "agent_id" {
  value = null_resource.agent.id
}
