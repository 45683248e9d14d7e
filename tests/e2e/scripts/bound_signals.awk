# tests/e2e/bound.test: the hits and events of bound_signals.bt against the
# calls prog_bound counted (ubt's stdout and stderr together)
/^-?[0-9]+$/ { printed++ }
/^calls [0-9]+ handler ran$/ { calls = $2 }
/^@c: / { counted = $2 }
/^WARNING: [0-9]+ events? dropped: / { dropped += $2 }
/^Lost [0-9]+ events$/ { dropped += $2 }
END {
	print (calls > 0 && counted == calls) ? "every call counted" : "counted " counted " of " calls
	print (printed + dropped == calls) ? "every event printed or reported" : "printed " printed " dropped " dropped " of " calls
}
