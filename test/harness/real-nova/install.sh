#!/usr/bin/env bash
# Install what the real-nova harness needs from Debian bookworm (idempotent).
#
# Only the *library* packages are installed (python3-nova, python3-placement,
# python3-glance, python3-neutron) plus mariadb-server and gunicorn. The daemon
# packages (nova-api, nova-compute, glance-api, ...) are NOT installed: their
# postinst scripts want systemd, keystone credentials and /etc/nova config.
# start.sh runs the services itself from the python modules with a private
# config dir. No daemon is started here (policy-rc.d). Takes ~40 s from scratch.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

PKGS=(
  python3-nova          # Nova Zed 26.2.2 (api, conductor, scheduler, compute + fake virt driver)
  python3-placement     # Placement 8.0.0
  python3-glance        # Glance 25.1.0 (image metadata only; file store)
  python3-neutron       # Neutron 21.0.0, server only (no agents): nova calls the
                        # Neutron API (list ports, port bindings) when listing,
                        # evacuating and deleting servers, even with networks=none
  python3-pymysql       # DB driver used in connection URLs
  python3-gunicorn      # WSGI server for placement
  mariadb-server        # private mariadbd instance started by start.sh
  curl jq
)
# optional: RN_KEYSTONE=1 ./install.sh also installs Keystone Zed 22.0.2
# (library package only, run by start.sh under gunicorn)
if [ "${RN_KEYSTONE:-0}" = 1 ]; then PKGS+=(python3-keystone python3-keystonemiddleware); fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install.sh: all packages already installed"
else
  echo "install.sh: installing ${missing[*]}"
  # Refresh the index once if it is empty/old (apt-cache needs it).
  if ! apt-cache policy python3-nova 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update -q -o DPkg::Lock::Timeout=600
  fi
  # Never let package postinst scripts start daemons (no systemd here anyway).
  # Respect an existing policy-rc.d; only add a temporary one if there is none.
  tmp_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    tmp_policy=1
  fi
  apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" || {
    # one retry after an index refresh (stale lists => 404)
    apt-get update -q -o DPkg::Lock::Timeout=600
    apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"
  }
  if [ "$tmp_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
fi

/usr/bin/python3 - <<'EOF'
import importlib.metadata as m
for d in ("nova", "openstack-placement", "glance", "neutron"):
    try:
        print(f"  {d} {m.version(d)}")
    except Exception as e:
        print(f"  {d}: ?? {e}")
EOF
if [ "${RN_KEYSTONE:-0}" = 1 ]; then
  /usr/bin/python3 -c 'import importlib.metadata as m; print("  keystone", m.version("keystone"))'
fi
