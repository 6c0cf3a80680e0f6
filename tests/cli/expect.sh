# Sourced by the exit-code scripts: `expect STATUS ARGS...` runs hwaccel
# ($hwaccel) with ARGS and counts a failure when it does not exit STATUS.
failures=0

expect() {
  want="$1"
  shift
  "$hwaccel" "$@" >/dev/null 2>&1
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: hwaccel $* exited $got, expected $want"
    failures=$((failures + 1))
  fi
}
