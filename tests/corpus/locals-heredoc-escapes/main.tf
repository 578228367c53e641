terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

locals {
  script = <<-EOT
    #!/bin/sh
    echo "$${HOME}"
    echo "%%{not a directive}"
    echo 'tab:	done'
  EOT

  inline   = "cost is $$$${price} and 100%% sure"
  plain    = <<EOT
no indent $${kept}
EOT
  directive = "%{ for i in [1, 2] }[${i}]%{ endfor }"
}

resource "null_resource" "script" {
  triggers = {
    script = local.script
  }
}

output "script" {
  value = local.script
}

output "inline" {
  value = local.inline
}

output "plain" {
  value = local.plain
}

output "directive" {
  value = local.directive
}
