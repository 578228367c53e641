policy_path = "home/$${aws:username}/*"
template    = "%%{if x}literal%%{endif}"
