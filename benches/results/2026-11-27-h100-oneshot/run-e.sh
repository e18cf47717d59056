#!/usr/bin/env bash
# Call E: call D's runs again, with the background thread held until the call has returned (in
# D it waited for the device, then contended with the call's teardown).
CALL=e exec bash "$(dirname "$0")/run-d.sh"
