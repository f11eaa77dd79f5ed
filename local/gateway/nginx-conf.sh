#!/usr/bin/env bash
# Prints the local gateway's nginx configuration: the stand-in for a Supabase
# project's URL, as Kong (nginx underneath) is on a hosted project. /auth/v1/*
# reaches Supabase Auth, and /functions/v1/<name>/* reaches that function's Deno
# process with the path the hosted platform gives a function (/<name>/...).
#   nginx-conf.sh PORT AUTH_URL RUN_DIR NAME=PORT...
# Errors go to standard error, which scripts/stack.sh keeps in .stack/logs/gateway.log.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: nginx-conf.sh PORT AUTH_URL RUN_DIR NAME=PORT..." >&2; exit 2; }
port=$1 auth=${2#http://} run=$3
shift 3
auth=${auth%/}

upstreams="" names=""
for route in "$@"; do
  name=${route%%=*} function_port=${route#*=}
  [[ $name =~ ^[A-Za-z0-9_-]+$ && $function_port =~ ^[0-9]+$ ]] || { echo "bad function route: $route" >&2; exit 2; }
  upstreams+="  upstream function-$name { server 127.0.0.1:$function_port; keepalive 64; }"$'\n'
  names+="    $name function-$name;"$'\n'
done

cat <<CONF
# Rendered by local/gateway/nginx-conf.sh for scripts/stack.sh; edits here are lost.
worker_processes 1;
pid $run/gateway-temp/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }

http {
  access_log off;
  server_tokens off;
  default_type application/json;
  # The functions judge bodies and headers themselves (their own 413 and 400s).
  client_max_body_size 0;
  underscores_in_headers on;
  ignore_invalid_headers off;
  client_body_temp_path $run/gateway-temp/body;
  proxy_temp_path $run/gateway-temp/proxy;
  fastcgi_temp_path $run/gateway-temp/fastcgi;
  uwsgi_temp_path $run/gateway-temp/uwsgi;
  scgi_temp_path $run/gateway-temp/scgi;

  upstream auth { server $auth; keepalive 8; }
$upstreams
  # From the request line as sent, so an encoded path reaches the function unchanged.
  map \$request_uri \$function_name {
    "~^/functions/v1/(?<name>[A-Za-z0-9_-]+)(?:[/?]|\$)" \$name;
    default "";
  }
  map \$request_uri \$function_uri {
    "~^/functions/v1(?<rest>/.*)\$" \$rest;
    default /;
  }
  map \$function_name \$function_upstream {
$names    default "";
  }

  server {
    listen 127.0.0.1:$port;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host \$http_host;
    # The gateway is the project's edge: X-Forwarded-For is the connection's address, not
    # whatever the client claimed, so the api function can tell Auth which client it calls
    # for (Auth's per-address rate limits key on the first value) and no client can pick
    # another's bucket.
    proxy_set_header X-Forwarded-For \$remote_addr;
    proxy_buffering off;
    proxy_request_buffering off;
    proxy_redirect off;
    # A hosted function's wall-clock limit.
    proxy_read_timeout 150s;

    location = /_gateway/health { return 200 '{"status":"ok"}'; }

    location = /auth/v1 { proxy_pass http://auth/; error_page 502 504 = @auth_unreachable; }
    location /auth/v1/ { proxy_pass http://auth/; error_page 502 504 = @auth_unreachable; }

    location /functions/v1/ {
      if (\$function_upstream = "") { return 404 '{"code":"NOT_FOUND","message":"Requested function was not found"}'; }
      proxy_pass http://\$function_upstream\$function_uri;
      error_page 502 504 = @function_unreachable;
    }

    location / { return 404 '{"message":"no route matched with those values"}'; }

    # nginx answers TRACE itself, with a 405 of its own that names no allowed methods;
    # the function's router answers it as every other method it does not serve (405
    # with Allow), so the method reaches it as sent.
    error_page 405 = @method_to_function;
    location @method_to_function {
      if (\$function_upstream = "") { return 404 '{"code":"NOT_FOUND","message":"Requested function was not found"}'; }
      proxy_pass http://\$function_upstream\$function_uri;
    }

    location @auth_unreachable { return 502 '{"message":"Supabase Auth is not reachable"}'; }
    location @function_unreachable { return 502 '{"message":"Function \$function_name is not reachable"}'; }
  }
}
CONF
