terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

module "queue" {
  source   = "./modules/queue"
  for_each = toset(["0", "1"])
}

moved {
  from = null_resource.queue[0]
  to   = module.queue["0"].null_resource.this
}

moved {
  from = null_resource.queue[1]
  to   = module.queue["1"].null_resource.this
}
