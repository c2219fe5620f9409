#!/bin/sh
# Entry point of the proxy image: nginx asks the container's own DNS server (the first nameserver
# in /etc/resolv.conf: 127.0.0.11 on Docker, the network's gateway on Podman) for the web
# replicas' addresses, so they are looked up again as they come and go.
set -eu
nameserver=$(awk '$1 == "nameserver" { print $2; exit }' /etc/resolv.conf)
case "$nameserver" in
*:*) nameserver="[$nameserver]" ;;
esac
echo "resolver ${nameserver:-127.0.0.11} valid=10s ipv6=off;" >/etc/nginx/conf.d/00-resolver.conf
exec "$@"
