terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "here" {
  triggers = {
    # path.cwd is the folder the engine was started in (before any -chdir): run in the
    # module's own folder it is the module's folder, through hyops as raw (docs/from-raw-tofu.md)
    cwd_is_module = tostring(abspath(path.cwd) == abspath(path.module))
  }
}

output "cwd_is_module" {
  value = abspath(path.cwd) == abspath(path.module)
}

output "module_name" {
  value = basename(abspath(path.cwd))
}
