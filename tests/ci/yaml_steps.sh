# Sourced by run-workflow.sh and run-action.sh: `step FILE ID` prints the `run: |` block of the step with
# `id: ID` in a workflow or action file (its lines, indentation removed).
step() {
  awk -v id="$2" '
    $0 ~ "id: " id "$" { found = 1; next }
    found && /^ *run: \|/ { match($0, /^ */); indent = RLENGTH; inblock = 1; next }
    inblock {
      match($0, /^ */)
      if ($0 !~ /^ *$/ && RLENGTH <= indent) exit
      print substr($0, indent + 3)
    }' "$1"
}
