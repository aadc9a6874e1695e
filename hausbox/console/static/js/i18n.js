// The console's words in the user's language (English and French; any missing word falls back to
// English). The language is the one chosen at set-up or in the preferences, else the browser's.

const WORDS = {
  fr: {
    "Welcome to hausbox": "Bienvenue sur hausbox",
    "Create the first administrator": "Créer le premier administrateur",
    "Username": "Identifiant",
    "Password": "Mot de passe",
    "Repeat the password": "Répéter le mot de passe",
    "Display name": "Nom affiché",
    "Language": "Langue",
    "Home location": "Emplacement de la maison",
    "Latitude": "Latitude",
    "Longitude": "Longitude",
    "Next": "Suivant",
    "Back": "Retour",
    "Finish": "Terminer",
    "Skip": "Passer",
    "Sign in": "Se connecter",
    "Sign out": "Se déconnecter",
    "Verify": "Vérifier",
    "Authentication code": "Code d'authentification",
    "Use a backup code": "Utiliser un code de secours",
    "Trust this device for 30 days": "Faire confiance à cet appareil pendant 30 jours",
    "Home": "Maison",
    "Energy": "Énergie",
    "History": "Historique",
    "Administration": "Administration",
    "Modes": "Modes",
    "Activity": "Activité",
    "On": "Allumer",
    "Off": "Éteindre",
    "Open": "Ouvrir",
    "Close": "Fermer",
    "Stop": "Arrêter",
    "Activate": "Activer",
    "Deactivate": "Désactiver",
    "Day": "Jour",
    "Week": "Semaine",
    "Month": "Mois",
    "Year": "Année",
    "The passwords differ": "Les mots de passe diffèrent",
    "Used for the time zone, sunrise and sunset.": "Sert au fuseau horaire, au lever et au coucher du soleil.",
    "Sunrise and sunset follow at once; the time zone at the box's next start.":
      "Le lever et le coucher du soleil suivent aussitôt ; le fuseau horaire au prochain démarrage de la box.",
  },
};

let language = "en";

export function setLanguage(code) {
  language = (code || "en").slice(0, 2).toLowerCase();
  document.documentElement.lang = language;
}

export function browserLanguage() {
  return (navigator.language || "en").slice(0, 2).toLowerCase();
}

export const LANGUAGES = [
  ["en", "English"],
  ["fr", "Français"],
];

export function t(text) {
  return (WORDS[language] && WORDS[language][text]) || text;
}
