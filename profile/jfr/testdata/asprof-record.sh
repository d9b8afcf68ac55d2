#!/bin/sh
# asprof-record.sh VERSION AGENT: records Turns.java with async-profiler's
# agent library AGENT (built from the async-profiler tag VERSION, 2.9 or
# 4.2.1), writing apVERSION-MODE.jfr into the current folder (see
# README.md). It runs from any folder, with the JDK's java and javac on
# PATH.
set -eu
version=$1
agent=$2
here=$(cd "$(dirname "$0")" && pwd)
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac -d "$classes" "$here/Turns.java"

# rec NAME AGENT_OPTIONS TURNS_MODES...
rec() {
	name=$1 opts=$2
	shift 2
	java -agentpath:"$agent=start,$opts,file=ap$version-$name.jfr,jfr" \
		-Dturns.ms=1500 -cp "$classes" Turns "$@"
}

rec cpu event=cpu compute monitor
rec itimer event=itimer compute monitor
rec wall event=wall compute monitor
rec wall-10ms event=wall,interval=10ms compute monitor
rec alloc event=alloc alloc
rec lock event=lock monitor park
case $version in
2.*) rec all event=cpu,alloc=256k,lock=1ms compute monitor park alloc ;;
*)
	rec all event=cpu,alloc=256k,lock=1ms,wall=20ms compute monitor park alloc
	rec nobatch event=cpu,wall=20ms,nobatch compute monitor
	;;
esac
