# Bash completion for pipec. Load it with
#   source completions/pipec.bash
# (or copy it to /etc/bash_completion.d/pipec).

_pipec() {
  local cur prev words cword
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  local commands="check compile run advise fmt calibrate import profile"
  local common="--color=auto --color=always --color=never --error-limit= --help"

  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
    return
  fi

  local options
  case "${COMP_WORDS[1]}" in
  check) options="$common --profile= --split-input-file --against=" ;;
  compile) options="$common --emit=text --emit=json --emit=dot --emit=cuda --emit=ast
                    --lower=streams --lower=graph --lower=auto --pipeline= --max-streams=
                    --replays= --profile= --stats -o --assign=makespan --assign=matching
                    --assign=round-robin --assign=levels --comm-kernels=" ;;
  run) options="$common --backend=auto --backend=sim --backend=cuda --lower=streams
                --lower=graph --lower=both --replays= --json --trace= --timeline --width=
                --compare= --compare-profile=
                --ignore-priorities --pipeline= --max-streams= --profile= --stats -o
                --html= --timing=auto --timing=cupti --timing=events --assign=makespan
                --assign=matching --assign=round-robin --assign=levels
                --objective=makespan --objective=end: --comm-kernels=" ;;
  advise) options="$common --backend=auto --backend=sim --backend=cuda --replays=
                   --pipeline= --profile= -o --json --max-streams= --assign=makespan
                   --assign=matching --assign=round-robin --assign=levels --apply=
                   --objective=makespan --objective=end: --min-gain= --min-gain-us= --comm-kernels=" ;;
  fmt) options="$common -i --check" ;;
  calibrate) options="$common -o" ;;
  profile) options="$common --default --profile=" ;;
  import) options="$common -o --step= --report --json --profile= --profile-out= --replays= --comm-kernels=" ;;
  *) return ;;
  esac

  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    # Options ending in '=' take a value: no space after them.
    [[ ${#COMPREPLY[@]} -eq 1 && "${COMPREPLY[0]}" == *= ]] && compopt -o nospace
    return
  fi
  # Files: .pipe sources, and any file after -o or a --profile/--trace.
  if [[ "$prev" == "-o" ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    if [ "${COMP_WORDS[1]}" = import ]; then
      COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -f -X '!*.gz' -- "$cur")
                 $(compgen -d -- "$cur"))
    else
      COMPREPLY=($(compgen -f -X '!*.pipe' -- "$cur") $(compgen -d -- "$cur"))
    fi
  fi
}
complete -F _pipec pipec
